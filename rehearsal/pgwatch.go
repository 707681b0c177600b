package rehearsal

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgWatch follows the PostgreSQL backends serving the booking service's
// database: their CPU is the booking service's too, though another
// process's. The server may be shared, so only the backends connected to
// this database count.
type pgWatch struct {
	conn *pgx.Conn

	mu   sync.Mutex
	cpu  map[int]time.Duration // last CPU time read, by backend pid
	seen int
}

func newPGWatch(databaseURL string) (*pgWatch, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return nil, err
	}
	return &pgWatch{conn: conn, cpu: map[int]time.Duration{}}, nil
}

// sample finds the database's backends and reads their CPU time. A backend
// that exits between two samples takes its last second with it: the figure
// is a floor.
func (p *pgWatch) sample() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := p.conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		return
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pid := range pids {
		if cpu, err := readProcCPU(int(pid)); err == nil {
			if _, ok := p.cpu[int(pid)]; !ok {
				p.seen++
			}
			p.cpu[int(pid)] = cpu
		}
	}
}

// total is the CPU time of every backend seen, and how many there were.
func (p *pgWatch) total() (time.Duration, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var sum time.Duration
	for _, c := range p.cpu {
		sum += c
	}
	return sum, p.seen
}

func (p *pgWatch) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = p.conn.Close(ctx)
}
