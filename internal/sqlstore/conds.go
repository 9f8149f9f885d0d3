package sqlstore

import (
	"strconv"
	"strings"
)

// conds builds a WHERE clause whose placeholders are numbered as they are
// added, so optional filters need no "($1 = ” OR ...)" tricks that keep
// a planner from using an index.
type conds struct {
	parts []string
	args  []any
}

// add appends a condition; each ? in it becomes the next $n, bound to
// the next of args.
func (c *conds) add(cond string, args ...any) {
	var b strings.Builder
	for _, r := range cond {
		if r == '?' {
			b.WriteString(c.arg(args[0]))
			args = args[1:]
			continue
		}
		b.WriteRune(r)
	}
	c.parts = append(c.parts, b.String())
}

// arg binds v to the next placeholder and returns it.
func (c *conds) arg(v any) string {
	c.args = append(c.args, v)
	return "$" + strconv.Itoa(len(c.args))
}

// in appends "col IN (...)" for values; nothing when there are none.
func in[T any](c *conds, col string, values []T) {
	if len(values) == 0 {
		return
	}
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	c.add(col+" IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(values)), ", ")+")", args...)
}

// where is the clause, "" when there are no conditions.
func (c *conds) where() string {
	if len(c.parts) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c.parts, " AND ")
}
