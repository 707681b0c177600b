package redisstore

// RoomKeys lets the external tests check where a room's keys land.
var RoomKeys = roomKeys
