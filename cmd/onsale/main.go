package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/bench"
	"github.com/foyer-dev/foyer/rehearsal"
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
	run, ok := benches[os.Args[2]]
	if !ok {
		usage()
	}
	if err := run(os.Args[3:]); err != nil {
		fmt.Fprintln(os.Stderr, "onsale:", err)
		os.Exit(1)
	}
}

// benches are the subcommands of onsale bench, by name.
var benches = map[string]func(args []string) error{
	"proxy": benchProxy, "poll": benchPoll, "join": benchJoin, "refuse": benchRefuse,
	"challenge": benchChallenge, "redis": benchRedis, "wrk": benchWrk, "numbers": benchNumbers,
	"scale": benchScale,
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage: onsale rehearsal [flags]
       onsale bench proxy|poll|join|refuse|challenge|redis|wrk|scale|numbers [flags]

  rehearsal  a whole on-sale on this machine: the booking service and Foyer
             on loopback, a crowd of simulated fans, and a verdict (sold out,
             oversold, FIFO, latency, memory); onsale rehearsal -h for flags

  proxy   requests/s and p99 of an admitted fan through Foyer, against bare
          Caddy reverse_proxy to the same upstream, in one run
  poll    status polls of fans in line, against Caddy respond
  join    newcomers joining the line, against Caddy respond
  refuse  newcomers over their join_limit (429), against Caddy respond 429
  challenge  newcomers handed a proof-of-work seed, against Caddy respond
  redis   Redis commands per join, per status poll and per admitted request,
          on a private redis-server
  wrk     the admitted request, the poll and the join again, measured by wrk
          (a load generator we did not write), against baselines with and
          without Foyer's cookies
  scale   a line of 10^4, 10^6 and 10^7 places on a private redis-server:
          Redis memory, a controller step's and a poll's cost, and the status
          of the fan at the last place against the bench's own count
  numbers every figure of the Numbers table, in one run; with
          -doc docs/benchmarks.md it rewrites the table

poll and join take -store redis://... to use a Redis store instead of memory.`)
	os.Exit(2)
}

// binaryUsage is the help of a flag naming one of this repository's
// binaries.
func binaryUsage(name string) string {
	return "path of the " + name + " binary (default: the one beside onsale, else ./bin/" + name + ")"
}

// commonFlags registers the flags every side-by-side benchmark takes.
func commonFlags(fs *flag.FlagSet) *bench.Options {
	var c bench.Options
	fs.StringVar(&c.Foyer, "foyer", "", binaryUsage("foyer"))
	fs.IntVar(&c.Conns, "conns", 32, "concurrent keep-alive connections")
	fs.IntVar(&c.Rounds, "rounds", 8, "rounds per contender, taking turns (an even number: each order is run both ways)")
	fs.Float64Var(&c.RoundSecs, "seconds", 2, "length of a round")
	fs.IntVar(&c.MaxRequests, "max-requests", 2_000_000, "upper bound on requests per round")
	return &c
}

// sideBySide parses the flags of the side-by-side benchmark "bench name":
// the common ones and those more registers.
func sideBySide(name string, args []string, more func(*flag.FlagSet)) (*bench.Options, error) {
	fs := flag.NewFlagSet("bench "+name, flag.ExitOnError)
	c := commonFlags(fs)
	if more != nil {
		more(fs)
	}
	return c, parseFlags(fs, args)
}

// storeFlag registers -store, the Redis URL of the room's store.
func storeFlag(fs *flag.FlagSet, store *string) {
	fs.StringVar(store, "store", "", "Redis URL of the room's store (default: memory)")
}

func benchProxy(args []string) error {
	var fans int
	c, err := sideBySide("proxy", args, func(fs *flag.FlagSet) {
		fs.IntVar(&fans, "fans", 1000, "admitted fans whose passes the load rotates through")
	})
	if err == nil {
		_, err = bench.Proxy(*c, fans)
	}
	return err
}

func benchPoll(args []string) error {
	var store string
	var fans int
	c, err := sideBySide("poll", args, func(fs *flag.FlagSet) {
		storeFlag(fs, &store)
		fs.IntVar(&fans, "fans", 2000, "fans in line whose tickets the polls rotate through")
	})
	if err == nil {
		_, err = bench.Poll(*c, store, fans)
	}
	return err
}

func benchJoin(args []string) error {
	var store string
	c, err := sideBySide("join", args, func(fs *flag.FlagSet) { storeFlag(fs, &store) })
	if err == nil {
		_, err = bench.Join(*c, store)
	}
	return err
}

func benchRefuse(args []string) error {
	c, err := sideBySide("refuse", args, nil)
	if err == nil {
		_, err = bench.Refuse(*c)
	}
	return err
}

func benchChallenge(args []string) error {
	c, err := sideBySide("challenge", args, nil)
	if err == nil {
		_, err = bench.Challenge(*c)
	}
	return err
}

func benchRedis(args []string) error {
	fs := flag.NewFlagSet("bench redis", flag.ExitOnError)
	var o bench.RedisOptions
	fs.StringVar(&o.Foyer, "foyer", "", binaryUsage("foyer"))
	fs.IntVar(&o.N, "n", 20000, "requests of each kind (more makes the background's share smaller)")
	fs.IntVar(&o.Conns, "conns", 8, "concurrent keep-alive connections")
	fs.DurationVar(&o.MaxTime, "max-time", 30*time.Second, "upper bound on each run")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	_, err := bench.Redis(o)
	return err
}

func benchScale(args []string) error {
	fs := flag.NewFlagSet("bench scale", flag.ExitOnError)
	sizes := fs.String("places", "1e4,1e6,1e7", "comma-separated sizes of line, one room each")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var o bench.ScaleOptions
	var err error
	if o.Sizes, err = bench.ScaleSizes(*sizes); err != nil {
		return err
	}
	_, err = bench.Scale(o)
	return err
}

func benchWrk(args []string) error {
	fs := flag.NewFlagSet("bench wrk", flag.ExitOnError)
	var o bench.WrkOptions
	fs.StringVar(&o.Foyer, "foyer", "", binaryUsage("foyer"))
	fs.StringVar(&o.Wrk, "wrk", "wrk", "path of the wrk binary")
	fs.IntVar(&o.Threads, "threads", 2, "wrk threads")
	fs.IntVar(&o.Conns, "conns", 64, "wrk connections")
	fs.IntVar(&o.Rounds, "rounds", 10, "rounds per contender, taking turns (an even number: each order is run both ways)")
	fs.DurationVar(&o.Round, "round", 3*time.Second, "length of a round")
	fs.StringVar(&o.RedisURL, "store", "", "Redis URL for the join on a Redis store (empty: skip it)")
	only := fs.String("only", "", "comma-separated scenarios: admitted, poll, join, join-redis (default: all)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *only != "" {
		o.Scenarios = strings.Split(*only, ",")
	}
	_, err := bench.Wrk(o)
	return err
}

func benchNumbers(args []string) error {
	fs := flag.NewFlagSet("bench numbers", flag.ExitOnError)
	var o bench.NumbersOptions
	c := commonFlags(fs)
	fs.StringVar(&o.RedisURL, "store", "redis://127.0.0.1:6379", "Redis URL for the joins on a Redis store")
	fs.IntVar(&o.Wrk.Threads, "wrk-threads", 2, "wrk threads")
	fs.IntVar(&o.Wrk.Conns, "wrk-conns", 64, "wrk connections")
	fs.IntVar(&o.Wrk.Rounds, "wrk-rounds", 20, "wrk rounds per contender, taking turns: many short rounds, since the machine drifts over seconds and one round in a few is disturbed, and the median of many pairs must not be; an even number runs each order both ways")
	fs.DurationVar(&o.Wrk.Round, "wrk-round", 3*time.Second, "length of a wrk round")
	doc := fs.String("doc", "", "write the table between the numbers markers of this Markdown file (make bench: docs/benchmarks.md)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o.Own, o.Wrk.Foyer = *c, c.Foyer
	o.Redis = bench.RedisOptions{Foyer: c.Foyer, N: 20000, Conns: 8, MaxTime: 30 * time.Second}
	o.GoTest = 10 * time.Minute
	rows, err := bench.Numbers(o)
	if err != nil {
		return err
	}
	table := bench.Table(rows, time.Now())
	fmt.Println()
	fmt.Print(table)
	if *doc == "" {
		return nil
	}
	return bench.WriteDoc(*doc, table)
}

func rehearse(args []string) error {
	c, profile, err := rehearsalFlags(args)
	if err != nil {
		return err
	}
	if c.Stack.FoyerBin, err = findBinary("foyer", c.Stack.FoyerBin, os.Executable); err != nil {
		return err
	}
	if c.Stack.BookingBin, err = findBinary("booking", c.Stack.BookingBin, os.Executable); err != nil {
		return err
	}
	if profile != "" {
		// The simulator's own cost is part of what a rehearsal measures:
		// its profile shows what to cut before blaming the servers.
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	// The first Ctrl-C stops the fans and still prints the verdict; once
	// the fans have stopped, a second one ends onsale at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return rehearsal.Run(ctx, c, stop)
}

// rehearsalFlags reads the rehearsal's flags into its configuration, and
// where to write onsale's own CPU profile (empty: nowhere).
func rehearsalFlags(args []string) (c rehearsal.Config, cpuProfile string, err error) {
	fs := flag.NewFlagSet("rehearsal", flag.ExitOnError)
	fs.IntVar(&c.Fans, "fans", 100_000, "simulated fans")
	fs.IntVar(&c.Seats, "seats", 10_000, "places in the venue, standing ones included")
	fs.IntVar(&c.Standing, "standing", 0, "of those, places in a standing zone")
	fs.DurationVar(&c.Arrival, "arrival", time.Minute, "window over which fans arrive, most of them in its first eighth")
	fs.DurationVar(&c.MaxTime, "max-time", 15*time.Minute, "stop and report after this long, whatever is left")
	fs.DurationVar(&c.Think, "think", time.Second, "a fan's time between two shopping steps (±50%)")
	fs.Float64Var(&c.Jitter, "jitter", 0.2, "polls come this fraction of refresh_seconds late at most, at random")
	fs.Float64Var(&c.Abandon, "abandon", 0.03, "share of fans who leave the line and never claim")
	fs.Float64Var(&c.Late, "late", 0.01, "share of fans who step away for twice the grace, then return")
	fs.IntVar(&c.Workers, "workers", 256, "requests in flight at most (the fans share their connections)")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the crowd's behaviours")
	fs.IntVar(&c.Bots, "bots", 0, "places made by bots without cookies (a new visitor each request, never back), before the fans arrive")
	fs.DurationVar(&c.Stack.WaitingIdle, "waiting-idle-timeout", 0, "the room's waiting_idle_timeout (0: its default)")
	fs.BoolVar(&c.CompareLiveness, "compare-liveness", false, "play the sale again with liveness out of reach, and compare sell-out time and slots spent on ghosts")
	fs.Float64Var(&c.FailCheckouts, "fail-checkouts", 0, "rehearsal fault: the share of checkouts the booking service fails on its side (its fake provider's payments), e.g. 0.02; 0: none")
	fs.BoolVar(&c.CompareRequeue, "compare-requeue", false, "scenario: an origin that fails -fail-checkouts (default 2%) of checkouts, played without and then with its retry; compares the failed fans' fates")
	fs.BoolVar(&c.Calibration, "calibration", false, "scenario: record every fan's outcome (likely, at risk, unlikely) and judge the supply estimates against who got tickets; run it with about 3× more fans than places")
	fs.BoolVar(&c.Refunds, "refunds", false, "scenario: a sell-out followed by refunds: the room's waitlist on, and once sold out -refund-share of the paid orders refunded through the provider's signed webhook; the places must go to the waitlisted fans in order")
	fs.Float64Var(&c.RefundShare, "refund-share", 0.05, "with -refunds, the share of paid orders refunded (at least 5 orders)")
	fs.StringVar(&c.Report, "report", "", "also write an HTML report with charts (the line, latency over time, the sell-out, the order of admission) to this file")
	fs.StringVar(&c.Stack.FoyerBin, "foyer", "", binaryUsage("foyer"))
	fs.StringVar(&c.Stack.BookingBin, "booking", "", binaryUsage("booking"))
	fs.StringVar(&c.Stack.Store, "store", "memory", "the room's store: memory, redis (a private redis-server, also the booking outbox's stream) or a loopback redis:// URL")
	fs.StringVar(&c.Stack.DatabaseURL, "database-url", "", "PostgreSQL URL of a fresh database for the booking service (empty: memory)")
	fs.IntVar(&c.Stack.DBMaxConns, "db-max-conns", 0, "the booking service's connection pool bound on the database (0: its default, 8 per CPU and at least 16)")
	fs.IntVar(&c.Stack.DBBackgroundConns, "db-background-conns", 0, "the booking service's second pool, for work no fan waits on: workers, payment webhooks (0: its default, a quarter of the first and at least 2)")
	fs.IntVar(&c.Stack.Rate, "rate", 6000, "the room's new_users_per_minute")
	fs.IntVar(&c.Stack.Cap, "cap", 1000, "the room's total_active_users")
	fs.DurationVar(&c.Stack.Session, "session", 10*time.Minute, "the room's session_duration")
	fs.DurationVar(&c.Grace, "grace", 30*time.Second, "the room's admission_grace")
	fs.DurationVar(&c.Stack.HoldTTL, "hold-ttl", 5*time.Minute, "the booking service's hold time")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write the simulator's own CPU profile (pprof) to this file")
	_ = fs.Parse(args)
	if fs.NArg() > 0 {
		return c, "", fmt.Errorf("rehearsal: unexpected arguments %v", fs.Args())
	}
	return c, cpuProfile, nil
}
