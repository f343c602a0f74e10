package contract

// Directory mutation actions.
const (
	ActionCreate  = "create"
	ActionReplace = "replace"
	ActionPatch   = "patch"
	ActionDelete  = "delete"
)

// DirectoryMutation is the data of a DIRECTORY_MUTATE event: the action, the key and
// the row after the write (nil after a delete).
type DirectoryMutation struct {
	Action string `json:"action"`
	Key    string `json:"key"`
	Row    *Row   `json:"row,omitempty"`
}
