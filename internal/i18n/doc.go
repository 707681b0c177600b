// Package i18n holds message catalogs and chooses among them: one JSON file
// per language named by its BCP 47 tag, checked against an English
// reference (every key, every plural form the language's whole numbers
// take, the same placeholders), chosen for a request by CLDR's language
// matcher (golang.org/x/text/language), and numbers written with the
// language's digits and grouping.
//
// It serves the booking service's storefront. It never reads the request
// body and keeps nothing per request: a Set is built once and read
// concurrently.
package i18n
