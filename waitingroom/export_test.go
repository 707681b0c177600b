package waitingroom

import "encoding/json"

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// CheckAnswer checks an answer without spending its seed or joining.
func (r *Room) CheckAnswer(client, seed, nonce string) error {
	_, err := r.checkAnswer(clientKey(client), seed, nonce, r.now())
	return err
}
