//go:build !linux

package main

import "os/exec"

// detach has no portable equivalent; onsale stops what it starts.
func detach(*exec.Cmd) {}
