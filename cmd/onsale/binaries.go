package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// binaryFlags are the flags that name a binary of this repository, which
// `make build` writes to bin/ beside bin/onsale.
var binaryFlags = []string{"foyer", "booking"}

// parseFlags parses args, then finds the binary each of binaryFlags names
// (see findBinary), so that a missing one stops onsale at once with what is
// missing and where it was looked for, not later as "fork/exec bin/foyer:
// no such file or directory".
func parseFlags(set *flag.FlagSet, args []string) error {
	if err := set.Parse(args); err != nil {
		return err
	}
	return findBinaries(set, os.Executable)
}

// findBinaries resolves each of binaryFlags that set defines, the directory
// of onsale's own executable coming from self.
func findBinaries(set *flag.FlagSet, self func() (string, error)) error {
	for _, name := range binaryFlags {
		f := set.Lookup(name)
		if f == nil {
			continue
		}
		path, err := findBinary(name, f.Value.String(), self)
		if err != nil {
			return err
		}
		if err := f.Value.Set(path); err != nil {
			return err
		}
	}
	return nil
}

// findBinary returns the path of the named binary. A path given with its
// flag must be there. Without one, the binary is looked for beside onsale's
// own executable, where `make build` puts it (bin/onsale, bin/foyer,
// bin/booking), so that onsale runs from any directory; then at bin/<name>
// under the working directory, which serves `go run ./cmd/onsale` from the
// checkout's root.
func findBinary(name, given string, self func() (string, error)) (string, error) {
	if given != "" {
		if err := isExecutable(given); err != nil {
			return "", fmt.Errorf("the %s binary given with -%s, %s, cannot be run: %w", name, name, given, err)
		}
		return given, nil
	}
	var tried []string
	if exe, err := self(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		tried = append(tried, filepath.Join(filepath.Dir(exe), name))
	}
	if wd, err := os.Getwd(); err == nil {
		tried = append(tried, filepath.Join(wd, "bin", name))
	}
	for _, p := range tried {
		if isExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no %s binary: looked for one beside onsale and under ./bin (%s); "+
		"run `make build` in the Foyer checkout (it writes bin/foyer and bin/booking beside bin/onsale), "+
		"or give its path with -%s", name, joinPaths(tried), name)
}

// isExecutable says why path is not a file this process may run, if it is
// not one.
func isExecutable(path string) error {
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case info.IsDir():
		return errors.New("it is a directory")
	case info.Mode().Perm()&0o111 == 0:
		return fs.ErrPermission
	}
	return nil
}

func joinPaths(paths []string) string {
	out := ""
	for i, p := range paths {
		if i > 0 {
			out += ", "
		}
		out += p
	}
	return out
}
