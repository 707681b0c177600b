package redisstore

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// Every operation on a room is one script: Redis runs a script atomically, so
// an operation is one round trip and nodes need no locks among themselves.
// Scripts run with EVALSHA and fall back to EVAL when the server does not have
// them cached (after a restart, or on a new shard).
//
// Redis scripts cannot include one another, so each is sent with lib.lua in
// front of it: the room's keys and the steps several operations share.

//go:embed lua/lib.lua
var lib string

var (
	//go:embed lua/init.lua
	initSrc string
	//go:embed lua/join.lua
	joinSrc string
	//go:embed lua/claim.lua
	claimSrc string
	//go:embed lua/reclaim.lua
	reclaimSrc string
	//go:embed lua/release.lua
	releaseSrc string
	//go:embed lua/leave.lua
	leaveSrc string
	//go:embed lua/advance.lua
	advanceSrc string
	//go:embed lua/snapshot.lua
	snapshotSrc string
	//go:embed lua/drawseed.lua
	drawSeedSrc string
	//go:embed lua/phaseseed.lua
	phaseSeedSrc string
	//go:embed lua/lanecommit.lua
	laneCommitSrc string
	//go:embed lua/saveoverrides.lua
	saveOverridesSrc string
	//go:embed lua/beat.lua
	beatSrc string
	//go:embed lua/history.lua
	historySrc string
	//go:embed lua/account.lua
	accountSrc string
	//go:embed lua/requeue.lua
	requeueSrc string
	//go:embed lua/auditappend.lua
	auditAppendSrc string
	//go:embed lua/audit.lua
	auditSrc string
	//go:embed lua/codeadd.lua
	codeAddSrc string
	//go:embed lua/coderedeem.lua
	codeRedeemSrc string
	//go:embed lua/codereturn.lua
	codeReturnSrc string
	//go:embed lua/supply.lua
	supplySrc string
	//go:embed lua/told.lua
	toldSrc string
)

var (
	initScript          = newScript(initSrc)
	joinScript          = newScript(joinSrc)
	claimScript         = newScript(claimSrc)
	reclaimScript       = newScript(reclaimSrc)
	releaseScript       = newScript(releaseSrc)
	leaveScript         = newScript(leaveSrc)
	advanceScript       = newScript(advanceSrc)
	snapshotScript      = newScript(snapshotSrc)
	drawSeedScript      = newScript(drawSeedSrc)
	laneCommitScript    = newScript(laneCommitSrc)
	phaseSeedScript     = newScript(phaseSeedSrc)
	saveOverridesScript = newScript(saveOverridesSrc)
	historyScript       = newScript(historySrc)
	beatScript          = newScript(beatSrc)
	accountScript       = newScript(accountSrc)
	requeueScript       = newScript(requeueSrc)
	auditAppendScript   = newScript(auditAppendSrc)
	auditScript         = newScript(auditSrc)
	codeAddScript       = newScript(codeAddSrc)
	codeRedeemScript    = newScript(codeRedeemSrc)
	codeReturnScript    = newScript(codeReturnSrc)
	supplyScript        = newScript(supplySrc)
	toldScript          = newScript(toldSrc)

	allScripts = []*redis.Script{
		initScript, joinScript, claimScript, reclaimScript, releaseScript, advanceScript,
		snapshotScript, drawSeedScript, phaseSeedScript, laneCommitScript, saveOverridesScript, historyScript, beatScript,
		accountScript, leaveScript, requeueScript, auditAppendScript, auditScript,
		codeAddScript, codeRedeemScript,
		supplyScript, toldScript,
	}
)

func newScript(body string) *redis.Script { return redis.NewScript(lib + body) }
