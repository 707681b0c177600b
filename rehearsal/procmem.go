package rehearsal

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/procfs"
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
		proc, err := procfs.NewProc(p.pid)
		if err != nil {
			p.gone = true
			continue
		}
		st, err := proc.NewStatus()
		if err != nil {
			p.gone = true
			continue
		}
		p.peakRSS = max(p.peakRSS, int64(st.VmRSS), int64(st.VmHWM))
		if cpu, err := procCPU(proc); err == nil {
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

// readProcCPU reads the user and system time process pid has used.
func readProcCPU(pid int) (time.Duration, error) {
	proc, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	return procCPU(proc)
}

func procCPU(proc procfs.Proc) (time.Duration, error) {
	st, err := proc.Stat()
	if err != nil {
		return 0, err
	}
	return seconds(st.CPUTime()), nil
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// machineCPU reads how long the machine's CPUs were busy and in all, from
// /proc/stat. The machine is shared: set against the processes' own CPU
// time, it says how much of it was somebody else's.
func machineCPU() (busy, total time.Duration, err error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, 0, err
	}
	st, err := fs.Stat()
	if err != nil {
		return 0, 0, err
	}
	c := st.CPUTotal
	// The guest times are already counted in user and nice.
	all := c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
	idle := c.Idle + c.Iowait
	return seconds(all - idle), seconds(all), nil
}

// seconds converts procfs's float seconds, which are whole clock ticks of
// 10 ms, to a duration.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(10 * time.Millisecond)
}
