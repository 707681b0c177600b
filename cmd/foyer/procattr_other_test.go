//go:build !linux

package main

import "os/exec"

// dieWithParent has no portable equivalent; the test stops its nodes itself.
func dieWithParent(*exec.Cmd) {}
