package sqlstore

import "fmt"

// collect reads every row of rows by scan, appended to out, and closes
// rows; an error says what was doing.
func collect[T any](rows Rows, out []T, scan func(Rows) (T, error), doing string) ([]T, error) {
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", doing, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", doing, err)
	}
	return out, nil
}
