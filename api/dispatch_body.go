package api

import (
	"encoding/json"
	"io"
	"sync"
	"unicode/utf8"
)

// bodyBufs holds the buffers dispatch bodies are read into; one grown past
// maxPooledBody is left to the collector.
var bodyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooledBody = 64 << 10

// readAllInto appends what r gives to b until r ends (io.EOF, not an error).
func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// parseDispatchBody decodes b into in when b is a dispatch body of the plain
// form, and says whether it was: one object whose members are "key" (a string),
// "body" (a string, an object or null) and "shape" (true or false), each at most
// once and spelled so, strings without escapes or control characters and of valid
// UTF-8, white space anywhere JSON allows it and nothing after the object. What
// it decodes is what encoding/json's decoder decodes from the same bytes
// (FuzzDispatchBodyParsedAsTheDecoderReadsIt). Anything else is left to that
// decoder: a false here is not an error.
func parseDispatchBody(b []byte, in *dispatchBody) bool {
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	var seen uint8
	for {
		name, j, ok := plainString(b, i)
		if !ok {
			return false
		}
		i = skipSpace(b, j)
		if i == len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		if i == len(b) {
			return false
		}
		var bit uint8
		switch string(name) {
		case "key":
			bit = 1
			v, j, ok := plainString(b, i)
			if !ok {
				return false
			}
			in.Key, i = string(v), j
		case "body":
			bit = 2
			switch b[i] {
			case '"':
				v, j, ok := plainString(b, i)
				if !ok {
					return false
				}
				in.Body.Pipe, i = string(v), j
			case '{':
				j := objectEnd(b, i)
				if j < 0 || !json.Valid(b[i:j]) {
					return false
				}
				in.Body.Args, i = append(json.RawMessage(nil), b[i:j]...), j
			default:
				j, ok := literal(b, i, "null")
				if !ok {
					return false
				}
				i = j
			}
		case "shape":
			bit = 4
			if j, ok := literal(b, i, "true"); ok {
				in.Shape, i = true, j
			} else if j, ok := literal(b, i, "false"); ok {
				i = j
			} else {
				return false
			}
		default:
			return false
		}
		if seen&bit != 0 {
			return false // a repeated member: the decoder's last-one-wins is left to it
		}
		seen |= bit
		i = skipSpace(b, i)
		if i == len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString is the string starting at b[i] when it has no escape and no
// control character and is valid UTF-8 (so that its bytes are its value), and
// the index after its closing quote.
func plainString(b []byte, i int) (s []byte, end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	ascii := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s = b[i+1 : j]
			if !ascii && !utf8.Valid(s) {
				return nil, 0, false
			}
			return s, j + 1, true
		case c == '\\' || c < 0x20:
			return nil, 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, 0, false
}

// literal is the index after word when b holds it at i.
func literal(b []byte, i int, word string) (int, bool) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return 0, false
	}
	return i + len(word), true
}

// objectEnd is the index after the object starting at b[i], found by its
// brackets outside strings (-1 if b ends first); json.Valid then judges it.
func objectEnd(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			for j++; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}
