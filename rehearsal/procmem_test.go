package rehearsal

import (
	"os"
	"runtime"
	"testing"
)

func TestProcWatchReadsThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	var w procWatch
	w.add("self", os.Getpid())
	w.add("gone", 1<<30) // no such pid: marked gone, not an error
	w.sample()
	got := w.snapshot()
	if got[0].gone || got[0].peakRSS < 1<<20 || got[0].cpu < 0 {
		t.Errorf("this process: %+v, want a resident set of at least 1 MiB", got[0])
	}
	if !got[1].gone {
		t.Errorf("a pid that does not exist: %+v, want gone", got[1])
	}
	busy, total, err := machineCPU()
	if err != nil || total <= 0 || busy <= 0 || busy > total {
		t.Errorf("machine CPU busy %v of %v, %v", busy, total, err)
	}
}
