package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) >= 2 && os.Args[1] == "rehearsal" {
		if err := rehearse(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "onsale:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) < 3 || os.Args[1] != "bench" {
		usage()
	}
	var err error
	switch os.Args[2] {
	case "proxy":
		err = benchProxy(os.Args[3:])
	case "poll":
		err = benchPoll(os.Args[3:])
	case "join":
		err = benchJoin(os.Args[3:])
	case "redis":
		err = benchRedis(os.Args[3:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "onsale:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage: onsale rehearsal [flags]
       onsale bench proxy|poll|join|redis [flags]

  rehearsal  a whole on-sale on this machine: the booking service and Foyer
             on loopback, a crowd of simulated fans, and a verdict (sold out,
             oversold, FIFO, latency, memory); onsale rehearsal -h for flags

  proxy   requests/s and p99 of an admitted fan through Foyer, against bare
          Caddy reverse_proxy to the same upstream, in one run
  poll    status polls of fans in line, against Caddy respond
  join    newcomers joining the line, against Caddy respond
  redis   Redis commands per join, per status poll and per admitted request,
          on a private redis-server

poll and join take -store redis://... to use a Redis store instead of memory.`)
	os.Exit(2)
}

// commonFlags are shared by every benchmark.
type commonFlags struct {
	foyer       string
	conns       int
	rounds      int
	roundSecs   float64
	maxRequests int
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.foyer, "foyer", "bin/foyer", "path of the foyer binary")
	fs.IntVar(&c.conns, "conns", 32, "concurrent keep-alive connections")
	fs.IntVar(&c.rounds, "rounds", 7, "rounds per contender, alternated")
	fs.Float64Var(&c.roundSecs, "seconds", 2, "length of a round")
	fs.IntVar(&c.maxRequests, "max-requests", 2_000_000, "upper bound on requests per round")
}
