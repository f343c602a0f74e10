package d1_test

import (
	"fmt"
	"strings"

	"github.com/capdir/capdir/api/importer/d1"
)

func ExampleReadJSON() {
	out := `[{"results":[{"key":"NOW","type":"fn","target":"now","auth":null,"seq":null,"enabled":1}],"success":true,"meta":{}}]`
	res, err := d1.ReadJSON(strings.NewReader(out), func(row []byte) error {
		fmt.Println(string(row))
		return nil
	})
	fmt.Println(res.Rows, err)
	// Output:
	// {"enabled":1,"key":"NOW","target":"now","type":"fn"}
	// 1 <nil>
}
