package serverproc

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Foyer is a foyer process started for a benchmark or a rehearsal.
type Foyer struct {
	cmd *exec.Cmd
	dir string
	log *bytes.Buffer
}

// StartFoyer runs the foyer binary with a Caddyfile and waits until every
// address in ready answers.
func StartFoyer(bin, caddyfile string, ready ...string) (*Foyer, error) {
	dir, err := os.MkdirTemp("", "onsale-")
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfg, []byte(caddyfile), 0o600); err != nil {
		return nil, err
	}
	p := &Foyer{dir: dir, log: new(bytes.Buffer)}
	p.cmd = exec.Command(bin, "run", "--config", cfg, "--adapter", "caddyfile")
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	Detach(p.cmd)
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, url := range ready {
		for {
			resp, err := http.Get(url)
			if err == nil {
				resp.Body.Close()
				break
			}
			if time.Now().After(deadline) {
				p.Stop()
				return nil, fmt.Errorf("foyer did not answer %s: %v\n%s", url, err, p.log)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return p, nil
}

// PID is the process id, to watch its memory and CPU.
func (p *Foyer) PID() int { return p.cmd.Process.Pid }

// Log is what the process wrote to its stdout and stderr so far. Read it
// once the process has stopped: the process writes to it while it runs.
func (p *Foyer) Log() []byte { return p.log.Bytes() }

// Stop interrupts the process, kills it if it has not exited within ten
// seconds, and removes its directory.
func (p *Foyer) Stop() {
	Stop(p.cmd, 10*time.Second)
	os.RemoveAll(p.dir)
}
