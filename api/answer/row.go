package answer

// Row is one capability: the eighteen stored columns of the directory table plus
// RowNum, which is computed by the read path and never stored (contract.Row, the
// same type, holds what is checked and derived of it).
//
// Text columns use the empty string for SQL NULL. Integer flags keep the documented
// 0/1 encoding so rows round-trip through JSON exactly as documented.
type Row struct {
	Key               string `json:"key"`
	Type              string `json:"type"`
	Target            string `json:"target"`
	Auth              string `json:"auth"`
	Content           string `json:"content"`
	UpdatedAt         string `json:"updated_at"`
	Category          string `json:"category"`
	AllowedCategories string `json:"allowed_categories"`
	Seq               *int64 `json:"seq"`
	Enabled           int    `json:"enabled"`
	PlannerVisible    int    `json:"planner_visible"`
	PlannerRank       int    `json:"planner_rank"`
	InputSchema       string `json:"input_schema"`
	Examples          string `json:"examples"`
	Sensitive         int    `json:"sensitive"`
	Runner            string `json:"runner"`
	Includes          string `json:"includes"`
	CreatedAt         string `json:"created_at"`

	// RowNum is the 1-based position in the canonical ordering, attached at read time.
	RowNum int `json:"row_num,omitempty"`
}

// EffectiveRunner is the runner that executes the row: the runner column when set,
// otherwise the runner inferred from type.
func (r *Row) EffectiveRunner() string {
	if r.Runner != "" {
		return r.Runner
	}
	return r.Type
}

// Risk levels of a row (Row.Risk).
const (
	RiskLow  = "low"
	RiskHigh = "high"
)

// Risk is the row's risk: RiskHigh when it is sensitive, else RiskLow. A token
// reaches a high-risk row only when its risk ceiling is high.
func (r *Row) Risk() string {
	if r.Sensitive == 1 {
		return RiskHigh
	}
	return RiskLow
}
