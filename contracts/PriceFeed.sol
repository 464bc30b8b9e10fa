// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice One asset's price feed: its owner submits observations, each a new round. Readers use
/// `latestRoundData` (the Chainlink aggregator shape) and the resolver's staleness bound.
contract PriceFeed {
    address public immutable asset;
    address public immutable owner;
    uint8 public immutable decimals;

    uint80 public latestRound;
    int256 private latestAnswer;
    uint256 private latestUpdatedAt;

    event FeedCreated(address indexed asset, address indexed owner, uint8 decimals);
    event ObservationSubmitted(uint80 indexed roundId, int256 answer, uint256 updatedAt);

    error NotOwner();
    error NonPositiveAnswer(int256 answer);
    error NoObservation();

    constructor(address asset_, address owner_, uint8 decimals_) {
        asset = asset_;
        owner = owner_;
        decimals = decimals_;
        emit FeedCreated(asset_, owner_, decimals_);
    }

    /// @notice Records a new observation (a price, scaled by `decimals`) as the next round.
    function submit(int256 answer) external {
        if (msg.sender != owner) revert NotOwner();
        if (answer <= 0) revert NonPositiveAnswer(answer);
        uint80 roundId = latestRound + 1;
        latestRound = roundId;
        latestAnswer = answer;
        latestUpdatedAt = block.timestamp;
        emit ObservationSubmitted(roundId, answer, block.timestamp);
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        if (latestRound == 0) revert NoObservation();
        return (latestRound, latestAnswer, latestUpdatedAt, latestUpdatedAt, latestRound);
    }
}
