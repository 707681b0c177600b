package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// caddyProc is a foyer process started for a benchmark.
type caddyProc struct {
	cmd *exec.Cmd
	dir string
	log *bytes.Buffer
}

// startFoyer runs the foyer binary with a Caddyfile and waits until every
// address in ready answers.
func startFoyer(bin, caddyfile string, ready ...string) (*caddyProc, error) {
	dir, err := os.MkdirTemp("", "onsale-")
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfg, []byte(caddyfile), 0o600); err != nil {
		return nil, err
	}
	p := &caddyProc{dir: dir, log: new(bytes.Buffer)}
	p.cmd = exec.Command(bin, "run", "--config", cfg, "--adapter", "caddyfile")
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	detach(p.cmd)
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
				p.stop()
				return nil, fmt.Errorf("foyer did not answer %s: %v\n%s", url, err, p.log)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return p, nil
}

func (p *caddyProc) stop() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
		}
	}
	os.RemoveAll(p.dir)
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// upstream is a tiny origin on loopback that answers every request alike.
func startUpstream() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	body := bytes.Repeat([]byte("x"), 512)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(body)
	})}
	go func() { _ = srv.Serve(l) }()
	return l.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
