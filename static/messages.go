package static

import "embed"

// Messages holds the message catalogs of everything a fan reads from the
// room, one JSON file per language, named by its BCP 47 tag (de.json,
// zh-Hans.json). en.json is the reference: every other catalog has each of
// its keys, and each plural form its language needs.
//
//go:embed messages/*.json
var Messages embed.FS

// MessagesDir is the directory of the catalogs inside Messages.
const MessagesDir = "messages"
