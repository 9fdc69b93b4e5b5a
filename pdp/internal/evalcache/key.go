package evalcache

import (
	"crypto/sha256"
	"fmt"
	"strconv"

	"github.com/open-policy-agent/opa/v1/ast"
)

// InputKey is the SHA-256 of an input document's deterministic encoding:
// object keys in order, a type tag and a length for each value, so
// different documents never share an encoding. It reads the ast.Value the
// policy evaluates, so the document is converted once; a value of a kind
// the engine never builds is an error (and so a deny), never a shared key.
func InputKey(v ast.Value) (string, error) {
	var buf [4096]byte // most documents encode in this, on the stack
	b, err := appendKey(buf[:0], v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return string(sum[:]), nil
}

func appendKey(b []byte, v ast.Value) ([]byte, error) {
	switch v := v.(type) {
	case ast.Null:
		return append(b, 'n'), nil
	case ast.Boolean:
		if v {
			return append(b, 't'), nil
		}
		return append(b, 'f'), nil
	case ast.String:
		return appendString(append(b, 's'), string(v)), nil
	case ast.Number:
		return appendString(append(b, 'd'), string(v)), nil
	case *ast.Array:
		b = strconv.AppendInt(append(b, '['), int64(v.Len()), 10)
		b = append(b, ':')
		var err error
		for i := 0; i < v.Len() && err == nil; i++ {
			b, err = appendKey(b, v.Elem(i).Value)
		}
		return b, err
	case ast.Object:
		b = strconv.AppendInt(append(b, '{'), int64(v.Len()), 10)
		b = append(b, ':')
		var err error
		for _, k := range v.Keys() { // sorted
			if b, err = appendKey(b, k.Value); err != nil {
				return b, err
			}
			if b, err = appendKey(b, v.Get(k).Value); err != nil {
				return b, err
			}
		}
		return b, nil
	}
	return b, fmt.Errorf("input document holds a %T, which the engine never builds", v)
}

func appendString(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}
