package answer

// Proof points at the receipt of a dispatch: whether the call succeeded, its
// invocation id, where its public view is read, and its status.
type Proof struct {
	OK            bool   `json:"ok"`
	InvocationID  string `json:"invocation_id"`
	PublicReceipt string `json:"public_receipt"`
	Status        string `json:"status"`
}
