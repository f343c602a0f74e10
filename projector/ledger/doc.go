// Package ledger signs and checks the receipt ledger: the Merkle tree of every
// receipt that package projector keeps (RFC 6962 hashing, golang.org/x/mod/sumdb/tlog).
//
//   - A node's Ed25519 key (Key) lives under its data dir, created at first start
//     with mode 0600; its public half is a note verifier key
//     (golang.org/x/mod/sumdb/note), served at /.well-known/capdir-keys.
//   - A Checkpoint (origin, tree size, root hash) is signed as a note: the
//     checkpoint text of the C2SP tlog-checkpoint format with the node's
//     signature. A Publisher signs one on a schedule and on demand and keeps the
//     latest beside the key.
//   - An Inclusion proves one receipt's leaf is in a signed checkpoint; a
//     Consistency proves one tree extends another. Both are checked with tlog's
//     own CheckRecord and CheckTree, from the public key alone.
//   - Check compares copies of the ledger's leaves (the projection's receipts, its
//     stored tree, the log's receipts) with a signed checkpoint and names the first
//     receipt whose copy does not verify.
//
// # Caveats
//
// A leaf is the receipt's data as the log holds it, which anyone holding the
// stored receipt can hash again; a public receipt carries the leaf hash and its
// proof, so a reader of the public view learns that a receipt with that hash is in
// the signed tree, not the receipt's private fields. Each node signs with its own
// key: in a cluster the nodes' checkpoints of one size carry the same root and
// different signatures.
package ledger
