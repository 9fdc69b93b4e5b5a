package sqlite

// mattn/go-sqlite3 is C: without cgo this import fails the build with a
// message that says so (see internal/cgorequired).
import _ "github.com/toolperm/pdp/internal/cgorequired"
