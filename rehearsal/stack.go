package rehearsal

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/internal/redisserver"
	"github.com/foyer-dev/foyer/internal/serverproc"
)

// rehearsalRoom is the waiting room's id, the passes' audience.
const rehearsalRoom = "rehearsal"

// stack is the on-sale under rehearsal: Foyer in front of the booking
// service, on loopback ports of their own, with a private redis-server when
// the room's store is Redis.
type stack struct {
	dir        string
	foyer      *serverproc.Foyer
	booking    *exec.Cmd
	bookingLog string
	bookingOut *os.File
	redis      *redisserver.Server
	redisPID   int

	base       string // Foyer, where fans go
	bookingURL string // the booking service itself, for the admin API
	caddyAdmin string // Caddy's admin endpoint, for the room's counters
	adminToken string
	// webhookSecret signs the payment provider's webhooks: the booking
	// service's fake provider's, and the refunds the rehearsal sends.
	webhookSecret []byte
	storeName     string

	stopped                bool
	foyerLogs, bookingLogs logSummary // read once the servers are gone
}

func startStack(c StackConfig) (_ *stack, err error) {
	s := &stack{}
	defer func() {
		if err != nil {
			s.stop()
		}
	}()
	if s.dir, err = os.MkdirTemp("", "onsale-rehearsal-"); err != nil {
		return nil, err
	}
	if c.DatabaseURL != "" {
		if err := loopbackURL(c.DatabaseURL); err != nil {
			return nil, fmt.Errorf("-database-url: %w", err)
		}
	}
	storeLine, bookingRedis := "store memory", ""
	s.storeName = "memory"
	switch {
	case c.Store == "memory":
	case c.Store == "redis":
		if s.redis, err = redisserver.Start(redisserver.Options{Dir: s.dir}); err != nil {
			return nil, err
		}
		s.redisPID = redisPID(s.redis.Addr)
		storeLine = "store redis redis://" + s.redis.Addr
		bookingRedis = "redis://" + s.redis.Addr + "/1"
		s.storeName = "redis (private redis-server " + s.redis.Addr + ")"
	case strings.HasPrefix(c.Store, "redis://"):
		if err := loopbackURL(c.Store); err != nil {
			return nil, fmt.Errorf("-store: %w", err)
		}
		storeLine = "store redis " + c.Store
		s.storeName = "redis " + c.Store
	default:
		return nil, fmt.Errorf("-store %q: want memory, redis or a redis:// URL", c.Store)
	}

	ports, err := serverproc.FreePorts(3)
	if err != nil {
		return nil, err
	}
	s.base = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	s.bookingURL = fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	s.caddyAdmin = fmt.Sprintf("http://127.0.0.1:%d", ports[2])
	token := make([]byte, 16)
	_, _ = rand.Read(token)
	s.adminToken = hex.EncodeToString(token)
	s.webhookSecret = make([]byte, 16)
	_, _ = rand.Read(s.webhookSecret)
	s.webhookSecret = []byte("whsec_" + hex.EncodeToString(s.webhookSecret))

	// The site is behind the room, the pay page included, as in the demo
	// stack: a fan needs a pass for everything but the room's own endpoints
	// and, as in the demo Caddyfile, a buyer's signed order link and the
	// storefront's static files. The provider's webhooks go straight to the
	// booking service.
	cfg := fmt.Sprintf(`{
	admin 127.0.0.1:%d
	auto_https off
	persist_config off
}
http://127.0.0.1:%d {
	@room not path /tickets/* /api/tickets/* /storefront/* /favicon.ico
	waiting_room @room {
		room %s
		title "On-sale rehearsal"
		%s
		new_users_per_minute %d
		total_active_users %d
		session_duration %s
		admission_grace %s
		%s
		%s
	}
	reverse_proxy 127.0.0.1:%d
}
`, ports[2], ports[0], rehearsalRoom, storeLine, c.Rate, c.Cap, c.Session, c.Grace, idleLine(c.WaitingIdle), waitlistLine(c.Waitlist), ports[1])
	if s.foyer, err = serverproc.StartFoyer(c.FoyerBin, cfg, s.base+"/_waiting-room/jwks.json"); err != nil {
		return nil, err
	}

	args := []string{
		"-addr", fmt.Sprintf("127.0.0.1:%d", ports[1]),
		"-jwks", s.base + "/_waiting-room/jwks.json",
		"-room", rehearsalRoom,
		"-public-url", s.base,
		"-admin-token", s.adminToken,
		"-hold-ttl", c.HoldTTL.String(),
	}
	if c.Waitlist {
		args = append(args, "-waitlist")
	}
	args = append(args, bookingDBArgs(c)...)
	args = append(args, bookingFaultArgs(c)...)
	if bookingRedis != "" {
		args = append(args, "-redis-url", bookingRedis)
	}
	s.bookingLog = filepath.Join(s.dir, "booking.log")
	if s.bookingOut, err = os.Create(s.bookingLog); err != nil {
		return nil, err
	}
	s.booking = exec.Command(c.BookingBin, args...)
	s.booking.Stdout, s.booking.Stderr = s.bookingOut, s.bookingOut
	// Only what the booking service needs: no DATABASE_URL or REDIS_URL of
	// the caller's leaking in behind our flags.
	// The webhook secret goes in the environment, out of the process list.
	s.booking.Env = []string{"HOME=" + s.dir, "PATH=" + os.Getenv("PATH"), "BOOKING_WEBHOOK_SECRET=" + string(s.webhookSecret)}
	serverproc.Detach(s.booking)
	if err := s.booking.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", c.BookingBin, err)
	}
	if err := waitHealthy(s.bookingURL+"/healthz", 60*time.Second); err != nil {
		return nil, fmt.Errorf("the booking service: %w\n%s", err, tail(s.bookingLog, 20))
	}
	return s, nil
}

// stop ends every process the stack started, the booking service first so
// that it does not log a gateway that went away, and reads their logs before
// their directory goes. It may be called again.
func (s *stack) stop() {
	if s.stopped {
		return
	}
	s.stopped = true
	if s.booking != nil {
		serverproc.Stop(s.booking, 15*time.Second)
	}
	if s.bookingOut != nil {
		s.bookingOut.Close()
	}
	if s.foyer != nil {
		s.foyer.Stop()
	}
	if s.redis != nil {
		_ = s.redis.Stop()
	}
	s.foyerLogs, s.bookingLogs = s.readLogs()
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// bookingDBArgs are the booking service's flags for its database: none on
// the memory store, and a pool size only where the rehearsal was given one
// (otherwise the service's own defaults are what is rehearsed).
func bookingDBArgs(c StackConfig) []string {
	if c.DatabaseURL == "" {
		return nil
	}
	args := []string{"-database-url", c.DatabaseURL}
	if c.DBMaxConns > 0 {
		args = append(args, "-db-max-conns", strconv.Itoa(c.DBMaxConns))
	}
	if c.DBBackgroundConns > 0 {
		args = append(args, "-db-background-conns", strconv.Itoa(c.DBBackgroundConns))
	}
	return args
}

// idleLine is the room's waiting_idle_timeout line, if one is set.
func idleLine(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return "waiting_idle_timeout " + d.String()
}

// waitlistLine is the room's waitlist line, when the scenario asks for it.
func waitlistLine(on bool) string {
	if !on {
		return ""
	}
	return "waitlist"
}

// bookingFaultArgs are the booking service's rehearsal faults, none unless
// the scenario asks for them (docs/rehearsal.md, "An origin that fails 2% of
// checkouts").
func bookingFaultArgs(c StackConfig) []string {
	var args []string
	if c.FailPayments > 0 {
		args = append(args, "-fault-fail-payments", strconv.FormatFloat(c.FailPayments, 'g', -1, 64),
			"-fault-fail-attempts", strconv.Itoa(max(1, c.FailAttempts)))
	}
	if c.NoRetry {
		args = append(args, "-fault-no-retry")
	}
	return args
}
