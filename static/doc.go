// Package static embeds Foyer's web assets: the waiting page template, the
// storefront of the reference booking service and the admin dashboard. They are
// plain HTML, CSS and JavaScript with no build step and no external assets, so a
// fan's browser never fetches anything from a third party while it waits.
package static
