package redisserver

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the server if the process that started
// it dies before stopping it (a test binary timing out, a benchmark killed),
// so that none is left behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
