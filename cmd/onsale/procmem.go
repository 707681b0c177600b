package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// procUsage is what the kernel says a process used: its peak resident memory
// and its CPU time. On a machine whose cores the simulator shares with the
// servers, the CPU split says who the latencies were competing with.
type procUsage struct {
	name    string
	pid     int
	peakRSS int64 // bytes: the larger of VmHWM and the highest VmRSS sampled
	cpu     time.Duration
	gone    bool // the process had exited when last sampled
}

// procWatch samples a few processes' memory while the rehearsal runs. VmHWM
// is the kernel's own high-water mark, so sampling only has to catch the
// processes before they exit.
type procWatch struct {
	mu    sync.Mutex
	procs []*procUsage
}

func (w *procWatch) add(name string, pid int) {
	w.mu.Lock()
	w.procs = append(w.procs, &procUsage{name: name, pid: pid})
	w.mu.Unlock()
}

// sample reads every process once.
func (w *procWatch) sample() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.procs {
		if p.gone {
			continue
		}
		rss, hwm, err := readProcStatus(p.pid)
		if err != nil {
			p.gone = true
			continue
		}
		p.peakRSS = max(p.peakRSS, rss, hwm)
		if cpu, err := readProcCPU(p.pid); err == nil {
			p.cpu = cpu
		}
	}
}

// snapshot returns a copy of what was measured.
func (w *procWatch) snapshot() []procUsage {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]procUsage, len(w.procs))
	for i, p := range w.procs {
		out[i] = *p
	}
	return out
}

// readProcStatus reads VmRSS and VmHWM, in bytes.
func readProcStatus(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		fields := strings.Fields(rest) // "12345 kB"
		if len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	return rss, hwm, sc.Err()
}

// clockTicks is USER_HZ, which Linux fixes at 100 for every architecture
// whose /proc/<pid>/stat user space reads.
const clockTicks = 100

// readProcCPU reads the user and system time the process has used.
func readProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// count fields from the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	// After the name: state is field 3, utime field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad times", pid)
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// machineCPU reads how long the machine's CPUs were busy and in all, from
// the first line of /proc/stat. The machine is shared: set against the
// processes' own CPU time, it says how much of it was somebody else's.
func machineCPU() (busy, total time.Duration, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var ticks [10]int64
	var sum int64
	for i := 1; i < len(f) && i <= len(ticks); i++ {
		ticks[i-1], _ = strconv.ParseInt(f[i], 10, 64)
		sum += ticks[i-1]
	}
	// user nice system idle iowait irq softirq steal guest guest_nice; the
	// guest times are already counted in user and nice.
	sum -= ticks[8] + ticks[9]
	idle := ticks[3] + ticks[4]
	return time.Duration(sum-idle) * time.Second / clockTicks, time.Duration(sum) * time.Second / clockTicks, nil
}
