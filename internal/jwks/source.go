package jwks

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// MaxSize bounds a key set's document: a few keys are a few kilobytes.
const MaxSize = 1 << 20

// Source reads a key set's document.
type Source func(ctx context.Context) ([]byte, error)

// URL reads the set from an http(s) URL with client (a plain client when
// nil; the Cache bounds each fetch with its own timeout).
func URL(url string, client *http.Client) Source {
	if client == nil {
		client = &http.Client{}
	}
	return func(ctx context.Context) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return readBounded(resp.Body)
	}
}

// File reads the set from a file, read again on every fetch so that an
// operator can replace it during a rotation.
func File(path string) Source {
	return func(context.Context) ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readBounded(f)
	}
}

// URLOrFile is URL for an http(s) address and File for anything else.
func URLOrFile(source string, client *http.Client) Source {
	if strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://") {
		return URL(source, client)
	}
	return File(source)
}

func readBounded(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("JWKS larger than %d bytes", MaxSize)
	}
	return data, nil
}
