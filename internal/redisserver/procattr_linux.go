package redisserver

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the server if the process that started
// it dies before stopping it (a test binary timing out, a benchmark killed),
// so that none is left behind. Its own process group keeps a Ctrl-C meant for
// the starter from reaching it first: the starter stops it in its own time.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
