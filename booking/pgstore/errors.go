package pgstore

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/foyer-dev/foyer/booking"
)

// isContention reports a deadlock or serialization failure: another
// transaction won, and trying again may succeed.
func isContention(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// classify turns a database failure into a booking error by what a caller can
// do about it. Domain errors pass through untouched.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var be *booking.Error
	if errors.As(err, &be) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code[:2] {
		case "08", // connection exception
			"53", // insufficient resources: too many connections, out of memory
			"57", // operator intervention: shutdown, cannot connect now
			"40": // transaction rollback that survived its retry
			return booking.Unavailable(err)
		}
		return err
	}
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	switch {
	case errors.As(err, &connectErr),
		errors.As(err, &netErr),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, pgx.ErrTxClosed),
		pgconn.SafeToRetry(err),
		pgconn.Timeout(err):
		return booking.Unavailable(err)
	}
	// A connection torn down mid-statement surfaces as a plain error from the
	// closed conn; a closed conn means "try again later".
	if isClosedConn(err) {
		return booking.Unavailable(err)
	}
	return err
}

func isClosedConn(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch e.Error() {
		case "conn closed", "closed pool", "conn busy":
			return true
		}
	}
	return false
}
