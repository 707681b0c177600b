// Package i18n holds message catalogs and chooses among them: one JSON file
// per language named by its BCP 47 tag, checked against an English
// reference (every key, every plural form the language's whole numbers
// take, the same placeholders), chosen for a request by CLDR's language
// matcher (golang.org/x/text/language), and numbers written with the
// language's digits and grouping.
//
// It is the one implementation of languages for Foyer: the waiting room's
// pages, polls and live updates (package gateway) and the booking service's
// storefront both word what a fan reads through it. It is a leaf: it
// imports no Caddy, no admission core and no embedded files, so each caller
// hands it its own catalogs.
//
// It never reads the request body and keeps nothing per request: Locales,
// Matchers and Sets are built once and read concurrently. Wording a place
// in line (Locale.Count, Locale.Uint) allocates only the string it returns,
// because the waiting room does it on every poll.
package i18n
