// Package fantest is a fan without a browser, for the tests that put fans in
// front of a real gateway: an HTTP client with a cookie jar of its own that
// follows no redirect (the gateway's answers are judged as they come), and
// the requests every such test makes with it. The tests' own fan types keep
// their client and hand it here. Only tests import it.
package fantest
