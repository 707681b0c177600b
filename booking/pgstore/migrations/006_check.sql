-- foyer_check lets one statement refuse: it raises when ok is false, with the
-- refusal's code as the message and what the caller needs to explain it as
-- the detail. A hold sends its statements together in one round trip; a
-- refusal mid-way must stop the rest, as an error does, rather than come back
-- as a value the client would have to read before sending the next statement.
CREATE FUNCTION foyer_check(ok boolean, code text, detail text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	IF NOT ok THEN
		RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = code, DETAIL = coalesce(detail, '');
	END IF;
	RETURN true;
END
$$;
