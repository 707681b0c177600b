package static

import "embed"

// Storefront holds the booking service's storefront under "storefront/": one
// page (index.html) that routes itself by URL, its script and its styles.
//
//go:embed storefront
var Storefront embed.FS
