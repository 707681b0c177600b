package rehearsal

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/foyer-dev/foyer/internal/loadgen"
)

// workerConns are one worker's keep-alive connections, one per host, used
// by that worker's goroutine alone: the request is written and its answer
// read on the goroutine that makes it. net/http's client hands every
// request to a writer and a reader goroutine of the connection and back,
// three goroutine switches a request; profiled in a 100,000-fan rehearsal
// that hand-off made the simulator cost as much CPU as Foyer itself.
type workerConns struct {
	byHost map[string]*workerConn
}

type workerConn struct {
	nc      net.Conn
	br      *bufio.Reader
	bw      *bufio.Writer
	stop    func() bool // ends the watch that unblocks the connection when the run stops
	reused  bool        // a request has been answered on it
	timeout time.Duration
}

// requestTimeout bounds one request, as the shared client's Timeout did.
const requestTimeout = 30 * time.Second

// roundTrip sends req on the worker's connection to its host, dialling one
// when there is none, and reads the whole answer (up to maxBody) before it
// returns. Redirects are not followed. A request that fails on a connection
// that had already served one is sent once more on a fresh connection: the
// server may have closed it while idle, as net/http's client also retries.
// Every POST the fans make carries an Idempotency-Key or is the provider's
// pay form, which pays an order once, so sending it again is safe.
func (wc *workerConns) roundTrip(ctx context.Context, req *http.Request) (resp *http.Response, body []byte, err error) {
	for attempt := 0; attempt < 2; attempt++ {
		c, err := wc.conn(ctx, req.URL.Host)
		if err != nil {
			return nil, nil, err
		}
		resp, body, err = c.exchange(req)
		if err == nil {
			if resp.Close {
				wc.drop(req.URL.Host)
			}
			return resp, body, nil
		}
		reused := c.reused
		wc.drop(req.URL.Host)
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if !reused || req.GetBody == nil && req.Body != nil && req.Body != http.NoBody {
			return nil, nil, err
		}
		if req.GetBody != nil {
			if req.Body, err = req.GetBody(); err != nil {
				return nil, nil, err
			}
		}
	}
	return nil, nil, err
}

func (wc *workerConns) conn(ctx context.Context, host string) (*workerConn, error) {
	if c := wc.byHost[host]; c != nil {
		return c, nil
	}
	nc, err := loadgen.LoopbackDialer(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	// One watch per connection, not per request: when the run stops, a
	// request in flight is unblocked by a deadline in the past.
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	c := &workerConn{nc: nc, br: bufio.NewReaderSize(nc, 16<<10), bw: bufio.NewWriterSize(nc, 4<<10), stop: stop, timeout: requestTimeout}
	if wc.byHost == nil {
		wc.byHost = map[string]*workerConn{}
	}
	wc.byHost[host] = c
	return c, nil
}

func (wc *workerConns) drop(host string) {
	if c := wc.byHost[host]; c != nil {
		c.stop()
		_ = c.nc.Close()
		delete(wc.byHost, host)
	}
}

// closeAll closes every connection of the worker.
func (wc *workerConns) closeAll() {
	for host := range wc.byHost {
		wc.drop(host)
	}
}

// exchange writes one request and reads its answer in full.
func (c *workerConn) exchange(req *http.Request) (*http.Response, []byte, error) {
	// A deadline is a timer reset on the connection: cheaper than a
	// context per request, and the same bound.
	if err := c.nc.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return nil, nil, err
	}
	if err := req.Write(c.bw); err != nil {
		return nil, nil, err
	}
	if err := c.bw.Flush(); err != nil {
		return nil, nil, err
	}
	resp, err := http.ReadResponse(c.br, req)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err == nil {
		// What is left past maxBody would be read as the next answer.
		var one [1]byte
		if n, _ := resp.Body.Read(one[:]); n > 0 {
			err = errors.New("answer longer than the simulator reads")
		}
	}
	resp.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	c.reused = true
	return resp, body, nil
}
