package wire

// Node keys. Every node signs the checkpoints of its receipt ledger with a key
// of its own; so that a verifier given the keys of one node checks any node's
// checkpoints, each node announces its public key on the control stream with a
// NODE_KEY_ANNOUNCED event on NodeKeySubject(id) as it starts, and every node
// folds the announcements and lists their keys. The control stream is written only
// by capdir itself and the nodes of its cluster (bus clients and services cannot
// publish there), and an announcement is signed by the key it announces, so a key
// is listed only when whoever announced it holds it.
const TypeNodeKeyAnnounced = "NODE_KEY_ANNOUNCED"

// nodeKeyPrefix starts the control-stream subjects of node key announcements.
const nodeKeyPrefix = controlPrefix + "nodekey."

// NodeKeySubject is where the key whose id is id is announced:
// capdir.ctl.nodekey.<ID>, the id being the key's note hash in hex (8 digits).
func NodeKeySubject(id string) string { return nodeKeyPrefix + id }

// NodeKeyAnnounced is the data of a NODE_KEY_ANNOUNCED event: the node whose log
// origin is Origin signs its checkpoints with the key of the note verifier key
// Verifier (name+hash+base64). Signature is the Ed25519 signature, base64, of
// NodeKeyStatement(Origin, Verifier) by that key.
type NodeKeyAnnounced struct {
	Origin    string `json:"origin"`
	Verifier  string `json:"verifier"`
	Signature string `json:"signature"`
}

// NodeKeyStatement is what an announcement's signature signs.
func NodeKeyStatement(origin, verifier string) []byte {
	return []byte("capdir node key\n" + origin + "\n" + verifier + "\n")
}

// NodeActor is the actor of what a node appends of its own accord.
const NodeActor = "node:ledger"
