package rehearsal

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"slices"
	"strings"
)

// logProblems is what the servers logged, once they are stopped.
func (s *stack) logProblems() (foyer, booking logSummary) { return s.foyerLogs, s.bookingLogs }

// readLogs counts the warnings and errors each server logged, with a few of
// the distinct messages: a rehearsal is also a hunt for bugs.
func (s *stack) readLogs() (foyer, booking logSummary) {
	if s.foyer != nil {
		foyer = summarizeLog(bytes.NewReader(s.foyer.Log()), func(line string) bool {
			return strings.Contains(line, `"level":"error"`) || strings.Contains(line, `"level":"warn"`)
		})
	}
	if f, err := os.Open(s.bookingLog); err == nil {
		defer f.Close()
		booking = summarizeLog(f, func(line string) bool {
			return strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN")
		})
	}
	return foyer, booking
}

type logSummary struct {
	lines    int
	problems int
	samples  []string
}

// expectedWarnings are what the servers say at every rehearsal's start and
// stop, about the configuration the rehearsal chose: not worth a look.
var expectedWarnings = []string{
	"HTTP/2 skipped because it requires TLS",
	"HTTP/3 skipped because it requires TLS",
	"exiting; byeee!!",
	"no -database-url: bookings are kept in memory",
	"no -ticket-secret: ticket codes are signed with a key that dies",
}

func summarizeLog(r io.Reader, bad func(string) bool) logSummary {
	var ls logSummary
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		ls.lines++
		line := sc.Text()
		if !bad(line) || slices.ContainsFunc(expectedWarnings, func(w string) bool { return strings.Contains(line, w) }) {
			continue
		}
		ls.problems++
		key := logMessage(line)
		if !seen[key] && len(ls.samples) < 5 {
			seen[key] = true
			if len(line) > 400 {
				line = line[:400] + "..."
			}
			ls.samples = append(ls.samples, line)
		}
	}
	return ls
}

// logMessage is the part of a log line that names what happened, so that a
// message repeated with other times or ids is shown once.
func logMessage(line string) string {
	if i := strings.Index(line, `"msg":"`); i >= 0 {
		rest := line[i+7:]
		if j := strings.IndexByte(rest, '"'); j >= 0 {
			return rest[:j]
		}
	}
	if i := strings.Index(line, "msg="); i >= 0 {
		rest := line[i+4:]
		if strings.HasPrefix(rest, `"`) {
			if j := strings.IndexByte(rest[1:], '"'); j >= 0 {
				return rest[1 : j+1]
			}
		}
		if f := strings.Fields(rest); len(f) > 0 {
			return f[0]
		}
	}
	return line
}
