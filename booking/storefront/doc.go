// Package storefront serves the booking service's pages to fans, rendered
// on the server in the fan's language, so that best-available and
// general-admission purchases work with JavaScript off: plain forms to
// choose a section or a standing zone and a quantity, hold, check out and
// pay. Where JavaScript runs, the page's script takes over and adds the
// interactive seat map.
//
// The pages never touch the store: every read and every form goes through
// the booking API's own handler (the same paths, holds and idempotency keys
// as the script), so a form can never sell a seat the API would not.
package storefront
