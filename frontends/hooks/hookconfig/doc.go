// Package hookconfig writes the PDP's hooks into an agent's own hook
// configuration (pdp init): Claude Code's and Gemini CLI's settings.json,
// Codex's hooks.json, Cursor's hooks.json. It changes only its own
// entries — every other setting and hook stays as it was, in its order —
// writes atomically with a backup of the file beside it, changes nothing
// on a second run, and refuses a file it cannot parse.
package hookconfig
