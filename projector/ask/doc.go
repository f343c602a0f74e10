// Package ask finds directory rows for a need said in plain words: the index behind
// GET /api/dispatch?ask=. An [Index] is an inverted index over the enabled rows,
// kept current from the projector ([Index.Apply] is a projector.Projector.WatchRows
// watcher), and [Index.Search] ranks rows for an ask, each result with why it
// matched.
//
// # What is searched
//
// Seven fields of each row, each with a boost: the key (3), the docstring's WHAT
// line (2.5), WHEN_TO_USE (2), the category (1.5), ARGS and OUTPUT (1 each), and the
// summary, every untagged comment line (0.75). A row without a WHAT line is
// described by its first untagged comment line, searched as its WHAT (an agent row
// without comment lines: the first line of its prompt), as contract.Row.Description
// describes it. EX is not searched: it repeats the key and sample arguments.
// Disabled rows are not indexed at all: they never appear.
//
// # Words
//
// Rows and asks are split alike: on every character that is not a letter or a digit
// (so "_" and "-" split keys: ZZ_TEST_TEMPERATURE is zz, test, temperature), lower-
// cased; one-character tokens, tokens over 64 bytes and a short list of English stop
// words ("the", "what", "is", "I need"…) are dropped, and the rest lightly stemmed:
// plural -s, -es and -ies, then -ing and -ed, then a final -e are stripped (models →
// model, listing → list, created and creates → creat; see stem). Stems only have to
// meet each other; results show the ask's words as written.
//
// # Ranking
//
// BM25F: per row and word, the word's frequency in each field times the field's
// boost, divided by the field's length relative to its average (b = 0.75), is
// summed and saturated (k1 = 1.2), then weighted by the word's inverse document
// frequency; the words' scores add up, and the sum is multiplied by the share of
// the ask's words the row holds, so a row that matches every word of an ask beats
// one that matches one word strongly. Ties go to the lower planner_rank, then to the
// key. An ask is at most 512 bytes and 20 distinct words.
//
// Only the rows a caller may see are ranked ([Query].Visible: every enabled row for
// the owner, a token's scope for a token holder), and only they enter the
// statistics scores are made of: a score says nothing about a row the caller cannot
// see.
//
// # Cost
//
// A search reads the posting list of each of its words once, then keeps the best
// rows in a small sorted list. Over 100,000 generated rows (BenchmarkAsk100k, on
// this project's shared 2-core machine), a mix of asks, very common words
// included, takes a median of 0.6 ms (about 1 ms of CPU an ask); a search with a
// visibility filter also calls the filter once per row, 2 to 3 ms. Changes are
// applied as the projector commits them, under the write lock: about 18 µs of CPU
// per row, half of it contract.ParseDoc; indexing 100,000 rows takes 1.8 s of CPU.
//
// Memory: per row, its key, type and category (shared between rows), its
// description cut to 256 bytes, 16 bytes of field lengths, a map entry from its key,
// and 8 bytes per distinct word (a posting, in a slice grown by appending); per
// distinct word, a map entry and a list. 100,000 generated rows of about 30
// distinct words each take 43 MB of heap; internal/bench's directory rows (six
// words each), 30 MB. A replaced or deleted row leaves a dead document in the
// posting lists until dead documents reach half the live ones (and 1,024): then the
// index is compacted under the write lock, in time linear in the postings, which
// keeps them under 1.5 times the live ones. At most 1,024 distinct words of one row
// are indexed.
//
// # did_you_mean
//
// did_you_mean (dispatcher/suggest) and ask do not share an index, because sharing
// would not be simpler: did_you_mean ranks whole keys by edit distance to a
// mistyped key, from an index by key length and character set, which a word index
// cannot answer (a typo is no word of any row); it covers every key, disabled rows
// included, and runs in the dispatcher's gate for every entry point, while ask
// ranks enabled rows' documentation for the HTTP facade. What they could share, the
// key map, is a small part of either.
//
// # Caveats
//
//   - Stemming is English and light; other languages are matched by exact
//     (lower-cased) words.
//   - The index lives in memory and is rebuilt from the projection when a node
//     starts (projector.Projector.WatchRows reads every row once).
//   - Scores are comparable within one answer, not across asks or over time.
package ask
