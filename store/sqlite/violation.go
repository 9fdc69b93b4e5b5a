package sqlite

import (
	"errors"

	"github.com/mattn/go-sqlite3"
	"github.com/toolperm/pdp/store/sqlstore"
)

// violation names the constraint a SQLite error broke: a primary key
// counts as unique.
func violation(err error) sqlstore.Violation {
	var se sqlite3.Error
	if !errors.As(err, &se) || se.Code != sqlite3.ErrConstraint {
		return sqlstore.NoViolation
	}
	switch se.ExtendedCode {
	case sqlite3.ErrConstraintUnique, sqlite3.ErrConstraintPrimaryKey:
		return sqlstore.Unique
	case sqlite3.ErrConstraintForeignKey:
		return sqlstore.ForeignKey
	}
	return sqlstore.NoViolation
}
