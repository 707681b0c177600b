//go:build !linux

package serverproc

import "os/exec"

// Detach has no portable equivalent; onsale stops what it starts.
func Detach(*exec.Cmd) {}
