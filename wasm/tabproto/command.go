package tabproto

import "encoding/json"

// commandMessage is a command on the wire.
type commandMessage struct {
	Type    string  `json:"type"`
	Command Command `json:"command"`
	// From is who sent it from a dashboard, on a server with tokens; the tab's page says so.
	From string `json:"from,omitempty"`
}

// EncodeCommand returns the message the hub sends a tab to forward c, sent by from ("" when
// unknown). It returns Validate's error for a command a tab must not obey.
func EncodeCommand(c Command, from string) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(commandMessage{Type: TypeCommand, Command: c, From: from})
}
