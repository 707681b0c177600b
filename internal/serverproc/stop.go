package serverproc

import (
	"os"
	"os/exec"
	"time"
)

// Stop interrupts a started process, so that it can shut down as it would
// for an operator, and kills it if it has not exited within grace. It
// returns once the process is gone.
func Stop(cmd *exec.Cmd, grace time.Duration) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
}
