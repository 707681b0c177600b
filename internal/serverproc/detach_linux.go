package serverproc

import (
	"os/exec"
	"syscall"
)

// Detach puts a server we start in its own process group, so that a Ctrl-C
// meant for onsale does not stop the servers before it has read their
// state, and has the kernel kill the server if onsale dies without stopping
// it, so that none is left behind.
func Detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
