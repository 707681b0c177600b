package redisstore_test

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the kernel kill a private server if the test binary dies
// before its cleanup runs (a timeout, a kill), so none is left behind.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
