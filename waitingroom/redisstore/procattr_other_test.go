//go:build !linux

package redisstore_test

import "os/exec"

// dieWithTest has no portable equivalent; the test's cleanup stops the server.
func dieWithTest(*exec.Cmd) {}
