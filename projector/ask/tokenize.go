package ask

import (
	"unicode"
	"unicode/utf8"
)

// maxTokenBytes is the longest token kept; longer runs of letters and digits (hashes,
// base64, minified data) are skipped whole.
const maxTokenBytes = 64

// tokenizer splits text into search terms, reusing its buffers; it is not safe for
// concurrent use.
type tokenizer struct {
	word, stem []byte
}

// each calls fn with every search term of s, in order: s is split on anything that
// is not a letter or a digit (so "_" splits keys), lower-cased, stop words and
// one-character tokens dropped, and the rest stemmed (see stem). fn is given the
// surface word (lower-cased) and its stem; both are only valid during the call.
func (t *tokenizer) each(s string, fn func(word, stem []byte)) {
	buf := t.word
	defer func() { t.word = buf }()
	i := 0
	for i < len(s) {
		// Skip separators.
		for i < len(s) {
			c := s[i]
			if c < utf8.RuneSelf {
				if isASCIIAlnum(c) {
					break
				}
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				break
			}
			i += n
		}
		// Collect one token, lower-cased.
		buf = buf[:0]
		long := false
		for i < len(s) {
			c := s[i]
			if c < utf8.RuneSelf {
				if !isASCIIAlnum(c) {
					break
				}
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				if len(buf) < maxTokenBytes {
					buf = append(buf, c)
				} else {
					long = true
				}
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			if len(buf)+utf8.UTFMax <= maxTokenBytes {
				buf = utf8.AppendRune(buf, unicode.ToLower(r))
			} else {
				long = true
			}
			i += n
		}
		if long || utf8.RuneCount(buf) < 2 || isStopWord(buf) {
			continue
		}
		t.stem = append(t.stem[:0], buf...)
		fn(buf, stem(t.stem))
	}
}

func isASCIIAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// stopWords are dropped from rows and asks alike: function words, and the words a
// plain-language ask wraps its need in ("I need", "what is").
var stopWords = map[string]struct{}{}

func init() {
	for _, w := range []string{
		"a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "by", "can",
		"could", "do", "does", "each", "every", "for", "from", "give", "how", "i", "if",
		"in", "into", "is", "it", "its", "me", "my", "need", "needs", "no", "not", "of",
		"on", "or", "our", "please", "should", "so", "some", "than", "that", "the",
		"their", "them", "then", "there", "these", "this", "those", "to", "us", "want",
		"wants", "was", "we", "what", "when", "where", "which", "who", "whose", "why",
		"will", "with", "would", "you", "your",
	} {
		stopWords[w] = struct{}{}
	}
}

func isStopWord(w []byte) bool {
	_, ok := stopWords[string(w)] // no allocation: the compiler converts in place
	return ok
}

// stem strips the common English inflections from a lower-case word of ASCII
// letters, in place, and returns it; other words (digits, other scripts, three
// letters or fewer) are returned as they are. It is deliberately light: it only has
// to map a word and its inflections to one form, the same on both sides, not to
// find the linguistic root.
//
//   - plurals (the S-stemmer): -ies → -y (not -eies, -aies), -es → -e (not -aes,
//     -ees, -oes), -s → "" (not -ss, -us, -is);
//   - else -ing and -ed, when at least three letters with a vowel remain, and a
//     doubled final consonant other than l, s, z is undoubled (running → run);
//   - then a final -e is dropped (not -ee), so that create, creates, created and
//     creating all become creat.
func stem(w []byte) []byte {
	n := len(w)
	if n <= 3 || !asciiLetters(w) {
		return w
	}
	switch {
	case hasSuffix(w, "ies") && !hasSuffix(w, "eies") && !hasSuffix(w, "aies"):
		w = append(w[:n-3], 'y')
	case hasSuffix(w, "es") && !hasSuffix(w, "aes") && !hasSuffix(w, "ees") && !hasSuffix(w, "oes"):
		w = w[:n-1]
	case hasSuffix(w, "s") && !hasSuffix(w, "ss") && !hasSuffix(w, "us") && !hasSuffix(w, "is"):
		w = w[:n-1]
	case hasSuffix(w, "ing"):
		w = stripVerb(w, 3)
	case hasSuffix(w, "ed"):
		w = stripVerb(w, 2)
	}
	if n := len(w); n > 3 && w[n-1] == 'e' && w[n-2] != 'e' {
		w = w[:n-1]
	}
	return w
}

// stripVerb drops an -ing or -ed suffix of k letters when what remains is a word.
func stripVerb(w []byte, k int) []byte {
	base := w[:len(w)-k]
	if len(base) < 3 || !hasVowel(base) {
		return w
	}
	if n := len(base); n >= 4 && base[n-1] == base[n-2] && !isVowel(base[n-1]) {
		switch base[n-1] {
		case 'l', 's', 'z':
		default:
			base = base[:n-1]
		}
	}
	return base
}

func asciiLetters(w []byte) bool {
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}

func isVowel(c byte) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y'
}

func hasVowel(w []byte) bool {
	for _, c := range w {
		if isVowel(c) {
			return true
		}
	}
	return false
}
