package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill a node the test started if the test
// binary dies first, so that none is left listening.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
