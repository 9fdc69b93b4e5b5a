// Package cgorequired stops a build without cgo at the first package that
// needs it, with a message that says so: the SQLite store is
// mattn/go-sqlite3, which is C. store/sqlite imports it for that alone;
// without cgo, the compiler's error here is the only one a build prints,
// instead of undefined names deep inside store/sqlite.
package cgorequired
