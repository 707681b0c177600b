package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the child if the test binary dies first,
// so no booking or Foyer process outlives a crashed test.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
