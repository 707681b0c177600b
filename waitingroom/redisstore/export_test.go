package redisstore

// RoomKeys lets the external tests check where a room's keys land.
var RoomKeys = roomKeys

// AccountBucket lets the external tests find an account's bucket.
var AccountBucket = accountBucket

// AccountKeys lists a room's account buckets.
var AccountKeys = accountKeys
